"""The graph's values: records, frozen containers, value rules, the schema, views, results and the
one converter.
"""
