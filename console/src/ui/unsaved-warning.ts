import { useEffect } from "react";

/** Marks the history entry pushed while there is unsaved work (a copy of the page's own entry). */
const GUARD = "unsavedGuard";
const onGuard = () => (window.history.state as Record<string, unknown> | null)?.[GUARD] === true;
const pushGuard = () => window.history.pushState({ ...window.history.state, [GUARD]: true }, "", window.location.href);

/**
 * While `dirty`, asks before the work is lost: leaving or reloading the page (the browser's own
 * question), following a link inside the console and the browser's Back (a confirm with
 * `question`). Links are caught on the document, before the router sees them. Back cannot be
 * cancelled once it happens, so a copy of the page's history entry is pushed while there is
 * unsaved work: Back steps off the copy onto the same page, which asks, and then goes back once
 * more or puts the copy back.
 */
export function useUnsavedWarning(dirty: boolean, question: string): void {
  useEffect(() => {
    if (!dirty) return;
    let leaving = false;
    if (!onGuard()) pushGuard();
    const popstate = () => {
      if (leaving || onGuard()) return;
      if (window.confirm(question)) {
        leaving = true;
        window.removeEventListener("beforeunload", beforeUnload);
        window.history.back();
      } else {
        pushGuard();
      }
    };
    const beforeUnload = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older browsers ask only when a value is set.
      event.returnValue = "";
    };
    const click = (event: MouseEvent) => {
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
      const link = (event.target as Element | null)?.closest?.("a[href]");
      if (!(link instanceof HTMLAnchorElement) || link.target === "_blank" || link.hasAttribute("download")) return;
      if (link.origin === window.location.origin && link.pathname === window.location.pathname) return;
      if (!window.confirm(question)) {
        event.preventDefault();
        event.stopPropagation();
      }
    };
    window.addEventListener("beforeunload", beforeUnload);
    document.addEventListener("click", click, true);
    window.addEventListener("popstate", popstate);
    return () => {
      window.removeEventListener("beforeunload", beforeUnload);
      document.removeEventListener("click", click, true);
      window.removeEventListener("popstate", popstate);
      // Saved (or undone) on the same page: the copy goes, so Back later takes one step, not two.
      if (!leaving && onGuard()) window.history.back();
    };
  }, [dirty, question]);
}
