"""Generators of kernel IR at any size and dtype (coop IR text a user could have written)."""
