"""workspace change notifications: every committed write to a workspace's documents (or to the
workspace row itself) sends `NOTIFY corpus_workspace_changed, '<workspace slug>'`, so that each
replica's search cache drops that workspace's entries, and a change to the admins' personas
sends it with an empty payload, so that each replica reloads the policy (docs/adr/0011). A
trigger rather than the service: `corpus ingest` and other processes write the same tables, and
PostgreSQL delivers a notification only when its transaction commits (duplicates within one are
folded into one).

Two triggers and a function: no rewrite, no lock beyond the brief one CREATE TRIGGER takes.

Revision ID: 0008
Revises: 0006
Create Date: 2026-12-03 18:00:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE FUNCTION notify_workspace_changed() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_TABLE_NAME = 'personas' THEN
                PERFORM pg_notify('corpus_workspace_changed', '');
            ELSIF TG_TABLE_NAME = 'workspaces' THEN
                PERFORM pg_notify('corpus_workspace_changed', COALESCE(NEW.slug, OLD.slug));
            ELSE
                IF TG_OP <> 'INSERT' THEN
                    PERFORM pg_notify('corpus_workspace_changed', w.slug)
                    FROM workspaces w WHERE w.id = OLD.workspace_id;
                END IF;
                IF TG_OP <> 'DELETE' THEN
                    PERFORM pg_notify('corpus_workspace_changed', w.slug)
                    FROM workspaces w WHERE w.id = NEW.workspace_id;
                END IF;
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER documents_notify_workspace AFTER INSERT OR UPDATE OR DELETE ON documents "
        "FOR EACH ROW EXECUTE FUNCTION notify_workspace_changed()"
    )
    op.execute(
        "CREATE TRIGGER workspaces_notify_workspace AFTER INSERT OR UPDATE OR DELETE "
        "ON workspaces FOR EACH ROW EXECUTE FUNCTION notify_workspace_changed()"
    )
    op.execute(
        "CREATE TRIGGER personas_notify_policy AFTER INSERT OR UPDATE OR DELETE ON personas "
        "FOR EACH ROW EXECUTE FUNCTION notify_workspace_changed()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER personas_notify_policy ON personas")
    op.execute("DROP TRIGGER workspaces_notify_workspace ON workspaces")
    op.execute("DROP TRIGGER documents_notify_workspace ON documents")
    op.execute("DROP FUNCTION notify_workspace_changed()")
