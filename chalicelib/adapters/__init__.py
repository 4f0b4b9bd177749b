"""Adapters below the service, beside the store: the outbound HTTP client."""
