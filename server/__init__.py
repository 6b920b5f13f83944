"""`s2mc serve`: the browser lab (docs/server.md). A web server with the page (an editor, the
machine's parameters, Run, the timeline, a core sweep, the Rz -> assembly view, the debugger and
the lab's exercises) and the JSON API it uses; every run in a capped worker process.

    from s2mc.server.app import Settings, create_app
    app = create_app(Settings(workers=2))      # uvicorn.run(app, host="127.0.0.1", port=8000)
"""
