/** The cursors of keyset pages: where the page on screen started, and the pages before it. */
export interface PageCursor {
  after: string | undefined;
  previous: (string | undefined)[];
}

export const FIRST_PAGE: PageCursor = { after: undefined, previous: [] };

export function nextPage(page: PageCursor, endCursor: string): PageCursor {
  return { after: endCursor, previous: [...page.previous, page.after] };
}

export function previousPage(page: PageCursor): PageCursor {
  return { after: page.previous.at(-1), previous: page.previous.slice(0, -1) };
}

/** Previous / next buttons for a keyset-paginated list (one page in memory at a time). */
export function Pager({
  page,
  hasNextPage,
  endCursor,
  onChange,
  label,
}: {
  page: PageCursor;
  hasNextPage: boolean;
  endCursor: string | undefined;
  onChange(page: PageCursor): void;
  label: string;
}) {
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" disabled={page.previous.length === 0} onClick={() => onChange(previousPage(page))}>
        ← Previous
      </button>
      <span>Page {page.previous.length + 1}</span>
      <button
        type="button"
        disabled={!hasNextPage || !endCursor}
        onClick={() => endCursor && onChange(nextPage(page, endCursor))}
      >
        Next →
      </button>
    </nav>
  );
}
