"""Tessera's pure core: identifiers, Spark SQL data types, schemas and catalog properties.

Standard library only; no Django, no pyspark.
"""
