"""Developer tasks and their helpers: check_python (run by the Makefile before anything is
installed, so standard library only, and by file path) and serve (the built site on 127.0.0.1
and the Chromium that reads it: browser tests, Lighthouse, the social card). Imports nothing
else from tools/.
"""
