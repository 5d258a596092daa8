"""Evaluation reports: one self-contained HTML file comparing runs."""
