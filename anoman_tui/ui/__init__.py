"""The Textual app: the compare screen, its panes and dialogs. The only layer that imports
Textual; it reaches the network only through `anoman_tui.streaming`."""
