import {
  BookMarked,
  FileText,
  Home,
  LayoutDashboard,
  Layers,
  LoaderCircle,
  LogOut,
  Menu,
  MessagesSquare,
  PanelLeftClose,
  PanelLeftOpen,
  Plug,
  ScrollText,
  Search,
  UserRound,
  Users,
} from 'lucide-react'
import { useEffect, useRef, useState, type SubmitEvent } from 'react'
import { Navigate, NavLink, Outlet, useLocation, useNavigate } from 'react-router'

import { CommandPalette } from '@/app/command-palette'
import { ThemeToggle } from '@/app/theme-toggle'
import { Alert } from '@/components/ui/alert'
import { Button } from '@/components/ui/button'
import { Dialog, DialogContent, DialogTitle } from '@/components/ui/dialog'
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/components/ui/dropdown-menu'
import { Input } from '@/components/ui/input'
import { useMe, type Me } from '@/features/auth/api/get-me'
import { useSignInOptions } from '@/features/auth/api/get-sign-in-options'
import { useLogOut } from '@/features/auth/api/sign-in'
import { ChangePasswordForm } from '@/features/auth/components/change-password-form'
import { ApiError, errorMessage } from '@/lib/api-client'
import { cn } from '@/lib/cn'

import { AuthFrame } from './routes/auth-frame'

const NAV = [
  { to: '/chat', label: 'Chat', icon: MessagesSquare, end: false },
  { to: '/', label: 'Home', icon: Home, end: true },
  { to: '/search', label: 'Search', icon: Search, end: false },
  { to: '/documents', label: 'Documents', icon: FileText, end: false },
  { to: '/dashboard', label: 'Dashboard', icon: LayoutDashboard, end: false },
]

// Under a divider, for admins (../shared/notes/ui.md, "Frame").
const ADMIN_NAV = [
  { to: '/people', label: 'People', icon: Users, end: false },
  { to: '/workspaces', label: 'Workspaces', icon: Layers, end: false },
  { to: '/audit', label: 'Audit log', icon: ScrollText, end: false },
  { to: '/connect', label: 'Connect an agent', icon: Plug, end: false },
]

const COLLAPSED_KEY = 'corpus.sidebar.collapsed'

/** The signed-in app: sidebar, top bar and the screen. Signed out, it sends the person to sign
 *  in (or to the first-run setup) and back here after. */
export function Shell() {
  const me = useMe()
  const location = useLocation()
  const unauthenticated = me.error instanceof ApiError && me.error.status === 401
  const options = useSignInOptions()

  if (me.isPending || (unauthenticated && options.isPending)) {
    return (
      <div className="flex min-h-svh items-center justify-center" aria-busy="true" aria-label="Loading">
        <LoaderCircle className="size-6 animate-spin text-muted-foreground" aria-hidden="true" />
      </div>
    )
  }
  if (unauthenticated) {
    if (options.data?.first_run) return <Navigate to="/setup" replace />
    const next = location.pathname + location.search + location.hash
    return <Navigate to={next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}`} replace />
  }
  if (me.isError) {
    return (
      <AuthFrame title="Corpus is not answering">
        <Alert variant="destructive">{errorMessage(me.error)}</Alert>
      </AuthFrame>
    )
  }
  if (me.data.must_change_password) {
    return (
      <AuthFrame
        title="Choose a new password"
        description="You signed in with a temporary password, from an invitation or a reset. Choose your own before you go on; the temporary one stops working."
      >
        <ChangePasswordForm email={me.data.email} currentLabel="Temporary password" />
      </AuthFrame>
    )
  }
  return <Frame me={me.data} />
}

function Frame({ me }: { me: Me }) {
  const [collapsed, setCollapsed] = useState(() => localStorage.getItem(COLLAPSED_KEY) === '1')
  const [mobileOpen, setMobileOpen] = useState(false)
  const { pathname } = useLocation()
  // The phone's navigation closes once it has taken the person somewhere.
  const [openedAt, setOpenedAt] = useState(pathname)
  const navigationOpen = mobileOpen && openedAt === pathname

  function toggle() {
    setCollapsed((value) => {
      localStorage.setItem(COLLAPSED_KEY, value ? '0' : '1')
      return !value
    })
  }

  return (
    <div className="flex min-h-svh">
      <a
        href="#main"
        className="sr-only z-50 rounded-md bg-background px-3 py-2 focus:not-sr-only focus:fixed focus:top-2 focus:left-2"
      >
        Skip to content
      </a>
      <aside
        className={cn(
          'sticky top-0 hidden h-svh shrink-0 flex-col border-r bg-sidebar md:flex',
          collapsed ? 'w-14' : 'w-56',
        )}
        aria-label="Sidebar"
      >
        <Sidebar me={me} collapsed={collapsed} onToggle={toggle} />
      </aside>
      <Dialog open={navigationOpen} onOpenChange={setMobileOpen}>
        <DialogContent side="right" className="right-auto left-0 max-w-64 border-r" aria-describedby={undefined}>
          <DialogTitle className="sr-only">Navigation</DialogTitle>
          <div className="flex h-full flex-col">
            <Sidebar me={me} collapsed={false} />
          </div>
        </DialogContent>
      </Dialog>
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="sticky top-0 z-30 flex h-14 items-center gap-3 border-b bg-background/90 px-4 backdrop-blur md:px-6">
          <Button
            variant="ghost"
            size="icon"
            className="md:hidden"
            aria-label="Open navigation"
            onClick={() => {
              setOpenedAt(pathname)
              setMobileOpen(true)
            }}
          >
            <Menu aria-hidden="true" />
          </Button>
          <GlobalSearch />
          <div className="ml-auto flex items-center gap-1">
            <ThemeToggle />
          </div>
        </header>
        <main id="main" className="flex-1 px-4 py-6 md:px-8 md:py-8">
          <Outlet context={me} />
        </main>
        <CommandPalette />
      </div>
    </div>
  )
}

function Sidebar({ me, collapsed, onToggle }: { me: Me; collapsed: boolean; onToggle?: () => void }) {
  const navigate = useNavigate()
  const logOut = useLogOut(() => { void navigate('/login', { replace: true }) })
  return (
    <>
      <div className={cn('flex h-14 items-center gap-2 border-b px-3', collapsed && 'justify-center px-0')}>
        <span className="flex size-7 shrink-0 items-center justify-center rounded-lg bg-primary text-primary-foreground">
          <BookMarked className="size-4" aria-hidden="true" />
        </span>
        {collapsed ? null : <span className="text-sm font-semibold">Corpus</span>}
      </div>
      <nav aria-label="Main" className="flex-1 overflow-y-auto p-2">
        <ul className="grid gap-0.5">
          {[...NAV, ...(me.actions.includes('people.manage') ? ADMIN_NAV : [])].map(({ to, label, icon: Icon, end }) => (
            <li key={to} className={cn(to === ADMIN_NAV[0]?.to && 'mt-2 border-t pt-2')}>
              <NavLink
                to={to}
                end={end}
                title={collapsed ? label : undefined}
                className={({ isActive }) =>
                  cn(
                    'flex h-8 items-center gap-2.5 rounded-md px-2.5 text-sm font-medium transition-colors focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
                    collapsed && 'justify-center px-0',
                    isActive
                      ? 'bg-muted text-foreground'
                      : 'text-muted-foreground hover:bg-muted/60 hover:text-foreground',
                  )
                }
              >
                <Icon className="size-4 shrink-0" aria-hidden="true" />
                {collapsed ? <span className="sr-only">{label}</span> : label}
              </NavLink>
            </li>
          ))}
        </ul>
      </nav>
      <div className="grid gap-1 border-t p-2">
        {onToggle ? (
          <Button
            variant="ghost"
            size="sm"
            className={cn('justify-start text-muted-foreground', collapsed && 'justify-center')}
            onClick={onToggle}
            aria-label={collapsed ? 'Expand sidebar' : 'Collapse sidebar'}
          >
            {collapsed ? <PanelLeftOpen aria-hidden="true" /> : <PanelLeftClose aria-hidden="true" />}
            {collapsed ? null : 'Collapse'}
          </Button>
        ) : null}
        <DropdownMenu>
          <DropdownMenuTrigger asChild>
            <button
              type="button"
              className={cn(
                'flex items-center gap-2 rounded-md p-1.5 text-left hover:bg-muted focus-visible:ring-2 focus-visible:ring-ring focus-visible:outline-none',
                collapsed && 'justify-center',
              )}
            >
              <span className="sr-only">Account menu: </span>
              <span className="flex size-7 shrink-0 items-center justify-center rounded-full bg-primary/15 text-xs font-semibold text-primary">
                {(me.display_name || me.email).slice(0, 1).toUpperCase()}
              </span>
              {collapsed ? null : (
                <span className="grid min-w-0 leading-tight">
                  <span className="truncate text-sm font-medium">{me.display_name || me.email}</span>
                  <span className="truncate text-xs text-muted-foreground capitalize">{me.role}</span>
                </span>
              )}
            </button>
          </DropdownMenuTrigger>
          <DropdownMenuContent side="top" align="start" className="w-56">
            <DropdownMenuLabel className="truncate">{me.email}</DropdownMenuLabel>
            <DropdownMenuSeparator />
            <DropdownMenuItem onSelect={() => { void navigate('/account') }}>
              <UserRound aria-hidden="true" />
              Account
            </DropdownMenuItem>
            <DropdownMenuItem
              onSelect={() => {
                logOut.mutate()
              }}
            >
              <LogOut aria-hidden="true" />
              Sign out
            </DropdownMenuItem>
          </DropdownMenuContent>
        </DropdownMenu>
      </div>
    </>
  )
}

/** The top bar's search: `/` focuses it from anywhere but a text field. */
function GlobalSearch() {
  const navigate = useNavigate()
  const input = useRef<HTMLInputElement>(null)
  const [value, setValue] = useState('')
  useEffect(() => {
    function onKey(event: KeyboardEvent) {
      const target = event.target as HTMLElement | null
      const typing = target?.closest('input, textarea, select, [contenteditable="true"]')
      if (event.key === '/' && !typing && !event.metaKey && !event.ctrlKey) {
        event.preventDefault()
        input.current?.focus()
      }
    }
    window.addEventListener('keydown', onKey)
    return () => { window.removeEventListener('keydown', onKey) }
  }, [])
  function submit(event: SubmitEvent) {
    event.preventDefault()
    if (!value.trim()) return
    void navigate(`/search?q=${encodeURIComponent(value.trim())}`)
    setValue('')
    input.current?.blur()
  }
  return (
    <form role="search" onSubmit={submit} className="relative w-full max-w-md" aria-label="Search everywhere">
      <Search className="pointer-events-none absolute top-1/2 left-2.5 size-4 -translate-y-1/2 text-muted-foreground" aria-hidden="true" />
      <Input
        ref={input}
        value={value}
        onChange={(event) => { setValue(event.target.value) }}
        placeholder="Search documents…"
        aria-label="Search documents"
        className="h-8 bg-muted/50 pr-8 pl-8"
      />
      <kbd
        className="pointer-events-none absolute top-1/2 right-2 hidden -translate-y-1/2 rounded border bg-background px-1.5 font-mono text-[10px] text-muted-foreground sm:block"
        title="Press / to search, ⌘K to jump"
      >
        /
      </kbd>
    </form>
  )
}
