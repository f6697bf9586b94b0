"""The plugin host: discovery, loading, blocking, failure isolation, dispatch and hot reload."""
