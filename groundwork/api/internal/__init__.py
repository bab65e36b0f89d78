"""The internal API (`/internal/v1`): only provider principals reach it; customer keys get 404."""
