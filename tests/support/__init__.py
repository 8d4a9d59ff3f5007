"""Helpers every test shares, one copy each.

- ``cluster``: a real queue-sharing group of ``qsg serve`` processes (``Cluster``, ``FAST``).
- ``redis_server``: a real ``redis-server`` on a free port (``RedisServer``, ``free_port``).
- ``mq``: the one test REST client of the MQI API (``MQ`` over real HTTP, ``AsyncMQ`` for
  in-process apps), its error ``MQFailed`` and the ``mq_reason`` assertion.
- ``inproc``: queue managers in this process (a group on one injected clock; a single QM
  driven through its MQI object).
- ``mqsc``: defining shared queues and structures through MQSC.
- ``names``: unique object names.
- ``waits``: the one bounded poll (``wait_until``) for states other processes reach.
- ``netproxy``: a TCP proxy that can partition a QM from Redis.
- ``faultload``: a load with a ledger that judges what a fault did to it.
- ``import_cycles``: ``python -m tests.support.import_cycles`` lists import cycles in app/.
"""
