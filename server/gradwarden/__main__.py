from gradwarden.cli import entry

entry()
