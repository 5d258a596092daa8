"""Test-only support code the fixtures hand to the library through its public hooks."""
