"""The MQSC commands, one module per command family; ``app.mqsc.executor`` dispatches to them.

* ``objects``  - DEFINE, ALTER, DELETE of queues, processes, CF structures, topics, namelists and
  channels; CLEAR QLOCAL
* ``channel``  - the CHLTYPE rules of channel definitions, and the commands that need the channel
  initiator (there is none: CSQM134I)
* ``display``  - DISPLAY of definitions (WHERE) and DISPLAY QSTATUS
* ``qmgr``     - ALTER/DISPLAY QMGR, DISPLAY GROUP, RESET QSTATS, REFRESH QMGR
* ``security`` - SET/DELETE/DISPLAY AUTHREC, REFRESH SECURITY
* ``cfstruct`` - BACKUP/RECOVER/RESET CFSTRUCT, DISPLAY CFSTATUS
* ``base``     - what they share, and ``MqscHost``: the queue manager as they see it
"""
