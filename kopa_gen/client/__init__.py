"""One spec-driven httpx client for every platform, identical in live and sandbox mode."""
