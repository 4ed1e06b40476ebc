"""End-to-end model tests: small team-written models (models.py) run eagerly and compiled."""
