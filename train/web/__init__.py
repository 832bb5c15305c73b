"""What both web servers share, below both: ``bourre serve`` (the browser table, ``train.serve``) and ``bourre arena
serve`` (``train.arena``) import it, and it imports neither (``tests/test_architecture.py`` holds that).

================ ====================================================================================================
``errors``       ``TableError(status, message)``: the refusal both servers answer as a JSON ``{"error": message}``
``http_input``   what a request may carry before it is read: its ``Origin``, its content type, its body (capped,
                 strict JSON), the ``Host`` names a server answers (``allowed_hosts``), heavy requests' slots
``connections``  the connection guard: slow and many clients, the open-file budget, uvicorn's server and config
``agent_specs``  the agent specs a client may name (registered names, budgets within limits, the operator's
                 ``--agent`` specs), never a file or code
``trick_list``   the tricks of a deal as both servers' seat views show them
================ ====================================================================================================

The package imports nothing here, so that importing one helper does not need the others' dependencies (uvicorn,
Starlette: the ``serve`` extra).
"""
