"""The command server of a queue manager: MQSC command strings and PCF messages put to
SYSTEM.COMMAND.INPUT (``server``), the PCF codec (``pcf``, pure), the PCF to MQSC mapping
(``mapping``) and the CSQN205I framing of MQSC replies (``mqscreply``)."""
