"""Security (docs/howto/security.md): authentication of REST callers and RACF/setmqaut-style authorization.

* ``rights`` - the pure part: rights, profiles, principals and the access decision;
* ``passwords`` - argon2 hashing of passwords and API keys;
* ``store`` - users, API keys and authority records in the shared repository;
* ``service`` - one queue manager's security: caches, authentication, checks.
"""
