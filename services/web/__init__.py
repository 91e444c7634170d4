"""The browser table (docs/WEB.md): static assets served by the HTTP face at ``/``."""
