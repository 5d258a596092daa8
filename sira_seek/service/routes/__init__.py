"""The routes of ``sira-seek serve``, one module per job; ``create_app`` includes each
module's ``router(state)`` in the order the OpenAPI document lists them."""
