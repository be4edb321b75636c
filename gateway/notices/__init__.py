"""Notices: the inbox of each account and the settings of how notices reach it."""
