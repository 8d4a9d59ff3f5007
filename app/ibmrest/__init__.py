"""IBM MQ REST API compatibility: the messaging API (``/ibmmq/rest/v{1,2,3}/messaging/...``)
and the MQSC endpoint and read resources of the administrative API, mapped onto this queue
manager's MQI verbs and MQSC executor.

Plain Python, no FastAPI: ``app/api/routes_ibm.py`` is the transport. Module map:

* ``errors``    - IBM's error body (``{"error": [{type, messageId, ...}]}``) and the one table
                  that turns MQ reason codes into IBM REST statuses and messages.
* ``headers``   - the ``ibm-mq-md-*`` / ``ibm-mq-usr-*`` headers and query parameters, per API version.
* ``messaging`` - POST (put), DELETE (destructive get), GET (browse) and messagelist as MQI calls.
* ``routing``   - reaching another queue manager of the group (forwarding until IGQ exists).
* ``mqsc``      - ``runCommand`` / ``runCommandJSON`` onto ``app.mqsc.executor.run_script``.
* ``admin``     - the installation, qmgr and queue read resources in IBM's JSON shapes.
"""
