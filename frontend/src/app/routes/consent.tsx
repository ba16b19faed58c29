import { useLocation, useNavigate, useSearchParams } from 'react-router'

import { Alert } from '@/components/ui/alert'
import { ConsentScreen } from '@/features/oauth/components/consent-screen'

import { AuthFrame } from './auth-frame'
import { usePageTitle } from '@/lib/page-title'

export function ConsentRoute() {
  usePageTitle('Connect an app')
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const location = useLocation()
  const tx = params.get('tx') ?? ''
  return (
    <AuthFrame wide>
      {tx.length < 8 ? (
        <Alert variant="destructive">
          This link is incomplete. Go back to the app that sent you here and connect again.
        </Alert>
      ) : (
        <ConsentScreen
          tx={tx}
          onUnauthenticated={() => {
            void navigate(
              `/login?next=${encodeURIComponent(location.pathname + location.search)}`,
              { replace: true },
            )
          }}
          go={(url) => { window.location.assign(url) }}
        />
      )}
    </AuthFrame>
  )
}
