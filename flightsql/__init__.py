"""Arrow Flight SQL endpoint (``manage.py flightsql``, docs/flightsql.md)."""
