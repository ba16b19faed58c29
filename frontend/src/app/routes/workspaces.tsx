import { PageHeader } from '@/components/ui/page-header'
import { SourcesSection } from '@/features/sources/components/sources-section'
import { PersonaPolicy } from '@/features/workspaces/components/persona-policy'
import { WorkspacesTable } from '@/features/workspaces/components/workspaces-table'
import { usePageTitle } from '@/lib/page-title'

import { AdminOnly } from './admin-only'

export function WorkspacesRoute() {
  usePageTitle('Workspaces')
  return (
    <AdminOnly action="workspaces.manage">
      {() => (
        <div className="mx-auto grid max-w-6xl gap-8">
          <PageHeader
            title="Workspaces"
            description="Where documents live, under which license, and which personas search them."
          />
          <WorkspacesTable />
          <SourcesSection />
          <PersonaPolicy />
        </div>
      )}
    </AdminOnly>
  )
}
