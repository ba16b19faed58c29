import { Plug } from 'lucide-react'
import { Link } from 'react-router'

import { buttonVariants } from '@/components/ui/button'
import { PageHeader } from '@/components/ui/page-header'
import { KeysTable } from '@/features/people/components/keys-table'
import { PeopleTable } from '@/features/people/components/people-table'
import { usePageTitle } from '@/lib/page-title'

import { AdminOnly } from './admin-only'

export function PeopleRoute() {
  usePageTitle('People')
  return (
    <AdminOnly action="people.manage">
      {(me) => (
        <div className="mx-auto grid max-w-6xl gap-8">
          <PageHeader
            title="People"
            description="Who uses Corpus, the agents that act for them, and their API keys."
            actions={
              <Link to="/connect" className={buttonVariants({ variant: 'outline' })}>
                <Plug aria-hidden="true" />
                Connect an agent
              </Link>
            }
          />
          <PeopleTable meId={me.id} />
          <KeysTable />
        </div>
      )}
    </AdminOnly>
  )
}
