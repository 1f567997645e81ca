"""Screens of the app: compare (the main one), the usage ledger and small dialogs."""
