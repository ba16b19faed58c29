"""The workspaces domain: where documents live, each with a title, a license and a tier, and,
for a remote workspace, the server it is searched on."""
