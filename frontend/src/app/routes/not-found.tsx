import { Compass } from 'lucide-react'
import { Link } from 'react-router'

import { buttonVariants } from '@/components/ui/button'
import { EmptyState } from '@/components/ui/empty-state'
import { usePageTitle } from '@/lib/page-title'

export function NotFoundRoute() {
  usePageTitle('Not found')
  return (
    <div className="mx-auto max-w-xl pt-12">
      <EmptyState
        icon={Compass}
        title="No page here"
        action={
          <Link to="/" className={buttonVariants({ variant: 'outline' })}>
            Go home
          </Link>
        }
      >
        The address may be mistyped, or the page has moved.
      </EmptyState>
    </div>
  )
}
