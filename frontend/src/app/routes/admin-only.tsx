import { ShieldOff } from 'lucide-react'
import type { ReactNode } from 'react'
import { useOutletContext } from 'react-router'

import { EmptyState } from '@/components/ui/empty-state'
import type { Me } from '@/features/auth/api/get-me'

import { may, type Action } from './permissions'

/** An admin screen: others see why it is not theirs (the server refuses their calls anyway). */
export function AdminOnly({ action, children }: { action: Action; children: (me: Me) => ReactNode }) {
  const me = useOutletContext<Me>()
  if (!may(me, action)) {
    return (
      <div className="mx-auto max-w-3xl">
        <EmptyState icon={ShieldOff} title="For admins only">
          This screen is for the people who run Corpus. Ask an admin if you need something here.
        </EmptyState>
      </div>
    )
  }
  return <>{children(me)}</>
}
