"""The pull-request review bot: `client` talks to GitHub, `plan` decides what to post (one
comment per new finding, with the fingerprint every output format shares), `command` is
`fp8lint review`."""
