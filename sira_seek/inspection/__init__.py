"""Making retrieval visible: query logs, Kibana / Dashboards saved objects."""
