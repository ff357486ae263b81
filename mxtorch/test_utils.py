"""``mx.test_utils``: helpers MXNet users and their tests call."""
