"""Work item enhancement: runs, actions, drafts, artifacts and the rules of apply."""
