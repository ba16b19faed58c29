import { PageHeader } from '@/components/ui/page-header'
import { AuditLog } from '@/features/audit/components/audit-log'
import { usePageTitle } from '@/lib/page-title'

import { AdminOnly } from './admin-only'

export function AuditRoute() {
  usePageTitle('Audit log')
  return (
    <AdminOnly action="audit.read">
      {() => (
        <div className="mx-auto grid max-w-6xl gap-6">
          <PageHeader title="Audit log" description="Every change to people, keys, workspaces and the persona policy: who, when, before and after." />
          <AuditLog />
        </div>
      )}
    </AdminOnly>
  )
}
