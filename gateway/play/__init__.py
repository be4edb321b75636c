"""GameService (service.py) over the steps a unary call and the Play stream share (steps.py); the
Play stream's session (session.py); responses built from pre-encoded parts (encoding.py); and the
service's registration taking those parts (registration.py)."""
