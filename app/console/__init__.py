"""The live console at ``/console``: one page (HTML and JavaScript served by the queue manager,
nothing from the Internet) over the console's JSON state, its server-sent events and the public
REST API (browse and put go through ``/v1`` with the caller's rights). Its state is
``app.console.state``; its routes are the API's (app/api/routes_console.py)."""
