import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { VMs } from './pages/VMs';
import { Create } from './pages/Create';
import { Fleet } from './pages/Fleet';
import { Pods } from './pages/Pods';
import { Usage } from './pages/Usage';

// The console's pages, in the nav's order. Each is served at
// /console/<path> (the server answers every such path with the app) and is
// one file in pages/ exporting one component.
export interface Page {
  path: string;
  title: string;
  component: ComponentType;
}

export const pages: Page[] = [
  { path: 'vms', title: 'VMs', component: VMs },
  { path: 'create', title: 'Create', component: Create },
  { path: 'fleet', title: 'Fleet', component: Fleet },
  { path: 'pods', title: 'Pods', component: Pods },
  { path: 'usage', title: 'Usage', component: Usage },
];

export const base = '/console/';
export const defaultPage = pages[0];

// pageOf answers the page a path names, the default one for /console and
// /console/, and null for any other path.
export function pageOf(pathname: string): Page | null {
  if (pathname === '/console' || pathname === base) return defaultPage;
  if (!pathname.startsWith(base)) return null;
  const name = pathname.slice(base.length).split('/')[0];
  return pages.find((p) => p.path === name) ?? null;
}

export function hrefOf(page: Page): string {
  return base + page.path;
}

// navigate moves to another page of the console without a reload.
export function navigate(href: string): void {
  if (href === location.pathname + location.search) return;
  history.pushState(null, '', href);
  dispatchEvent(new PopStateEvent('popstate'));
}

// useLocation is the current path, updated on navigate and Back/Forward.
// /console and /console/ become the default page's path, so its link is
// the current one and a reload lands on it.
export function useLocation(): string {
  const [path, setPath] = useState(() => {
    if (location.pathname === '/console' || location.pathname === base) {
      history.replaceState(null, '', hrefOf(defaultPage) + location.search);
    }
    return location.pathname;
  });
  useEffect(() => {
    const on = () => setPath(location.pathname);
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  return path;
}

// followLink makes a plain <a href> under /console/ navigate in place; a
// modified click (new tab, download) is left to the browser.
export function followLink(e: MouseEvent): void {
  const a = (e.target as Element | null)?.closest?.('a');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  if (a.target || a.hasAttribute('download') || a.origin !== location.origin || !a.pathname.startsWith(base)) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
}
