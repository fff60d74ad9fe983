-- Version 13 (PostgreSQL). Never edit a shipped migration: add a new file.
-- Nodes of a cluster no longer prove themselves with a secret kept in the
-- database (whoever read the database could use it): they sign requests with
-- a key derived from the secrets key, which lives outside it. The old value is
-- dropped with its table.
DROP TABLE cluster_secrets;
