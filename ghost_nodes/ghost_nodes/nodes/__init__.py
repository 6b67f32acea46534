"""The executables of the Ghost graph, one module each."""
