"""The offline sandbox: one generic ASGI emulator that serves every platform spec from the world database."""
