import { useEffect } from 'react'

/** The browser tab names the screen: "Documents · Corpus". */
export function usePageTitle(title: string | undefined): void {
  useEffect(() => {
    document.title = title ? `${title} · Corpus` : 'Corpus'
  }, [title])
}
