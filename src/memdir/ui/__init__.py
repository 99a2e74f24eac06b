"""``memdir ui``: a local review page for one store on 127.0.0.1 (L4, beside the MCP server).

The page reads through the service layer and changes memory only through the very functions
the CLI calls, as the owner on the ``ui`` channel (:data:`memdir.ui.app.UI_CALLER`): one commit
per operation, the store lock, the audit log. It never writes a file itself; a refresh shows
what other processes changed.

Guarding it (:mod:`memdir.ui.app`): a random token in the printed URL is swapped on first load
for an HttpOnly, SameSite=Strict cookie; anything without it is refused (403). The Host header
must name the loopback address and port it is served on (DNS rebinding), a form post must come
from the page's own origin (CSRF), and a strict Content-Security-Policy allows only the page's
own script and style.

Imports: Starlette, Jinja2 and uvicorn, loaded only when ``memdir ui`` runs.
"""
