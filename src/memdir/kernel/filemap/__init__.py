"""The project's file map (anatomy): scanning files and keeping anatomy.json current."""
