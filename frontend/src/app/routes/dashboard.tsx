import { LayoutDashboard } from 'lucide-react'
import { useState } from 'react'
import { useOutletContext } from 'react-router'

import { Alert } from '@/components/ui/alert'
import { EmptyState } from '@/components/ui/empty-state'
import { PageHeader } from '@/components/ui/page-header'
import { Skeleton } from '@/components/ui/skeleton'
import type { Me } from '@/features/auth/api/get-me'
import { useDashboard } from '@/features/dashboard/api/dashboard'
import { ActivityFeed } from '@/features/dashboard/components/activity-feed'
import { GapsPanel, outline } from '@/features/dashboard/components/gaps-panel'
import { AgentsTable, Composition, Figures, UsageCharts } from '@/features/dashboard/components/panels'
import { UploadDialog, type Draft } from '@/features/documents/components/upload-dialog'
import { StaleList } from '@/features/sources/components/stale-list'
import { errorMessage } from '@/lib/api-client'
import { usePageTitle } from '@/lib/page-title'

import { canWrite, may } from './permissions'

/** `/dashboard`: what the corpus holds, how it is used, and — for admins — the agents and the
 *  questions it could not answer, each one a document to write. */
export function DashboardRoute() {
  usePageTitle('Dashboard')
  const me = useOutletContext<Me>()
  const dashboard = useDashboard()
  const [draft, setDraft] = useState<Draft | null>(null)
  const admin = may(me, 'gaps.read')
  return (
    <div className="mx-auto grid max-w-6xl min-w-0 gap-6">
      <PageHeader title="Dashboard" description="What the corpus holds, how it is used, and what it is missing." />
      {dashboard.isPending ? (
        <div className="grid gap-4" aria-busy="true" aria-label="Loading the dashboard">
          <Skeleton className="h-20" />
          <Skeleton className="h-56" />
        </div>
      ) : dashboard.isError ? (
        <Alert variant="destructive">{errorMessage(dashboard.error)}</Alert>
      ) : (
        <>
          <Figures figures={dashboard.data.figures} />
          {dashboard.data.figures.documents === 0 ? (
            <EmptyState icon={LayoutDashboard} title="Nothing to chart yet">
              Once documents are added and people search and ask, this page shows the last 30 days,
              what each workspace holds, what agents do, and the questions nothing answered.
            </EmptyState>
          ) : null}
          <UsageCharts days={dashboard.data.days} />
          {admin ? (
            <GapsPanel
              onWrite={(gap) => {
                setDraft(outline(gap))
              }}
            />
          ) : null}
          <StaleList />
          <Composition dashboard={dashboard.data} />
          <div className="grid min-w-0 gap-4 lg:grid-cols-2">
            {admin ? <AgentsTable agents={dashboard.data.agents} /> : null}
            <ActivityFeed />
          </div>
        </>
      )}
      {draft && canWrite(me) ? (
        <UploadDialog
          open
          draft={draft}
          onOpenChange={(open) => {
            if (!open) setDraft(null)
          }}
        />
      ) : null}
    </div>
  )
}
