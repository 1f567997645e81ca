"""The history's tables, and how a database of each engine gets to the current version.

`sqlite` holds SQLite's migrations from an empty file (`MIGRATIONS`, one step per schema
version, `SCHEMA_VERSION` the current one); `postgresql` creates a PostgreSQL history
whole at schema 11 and steps it on from there (`PG_MIGRATIONS`); `shared` holds the
steps after schema 11, written once in the SQL both engines understand, and the vote
pattern (`vote_pattern`) those steps and the store keep on each vote. The store
(`anoman_tui.history.store`) runs them on open.

May import: the standard library and the rest of `anoman_tui.history` (never the store).
"""
