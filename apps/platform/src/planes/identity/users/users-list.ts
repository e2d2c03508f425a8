import type { Role, WorkspaceUser } from '@tarmac/contract';
import type { PageRequest, PageResult } from '@tarmac/server-kit';
import type { InvitationRow, PrincipalRow, Store } from '@tarmac/store';
import { PREFIX } from '../../../framework/credentials.js';

/** A member as the users API shows it (reference §1.13 `WorkspaceUser`). */
export function toWorkspaceUser(
  row: PrincipalRow,
  role: Role,
  source: WorkspaceUser['source'] = 'invitation',
): WorkspaceUser {
  const [given = '', ...family] = row.name.split(' ');
  return {
    sub: row.id,
    email: row.email ?? '',
    email_verified: false,
    given_name: given,
    family_name: family.join(' '),
    role,
    accepted: true,
    expired: false,
    source,
  };
}

/**
 * `GET /v0/users` (reference §1.13: `WorkspaceUser[]` with `accepted` and `expired`): the members,
 * then the invitations not yet accepted. One keyset over the union: members come first in the
 * requested order (the store pages them); once they are exhausted, the invitations follow in the
 * same order. A cursor whose id is an invitation id (`inv_`) resumes among the invitations, any
 * other resumes among the members, so no item is repeated or skipped across pages.
 * Invitations are few per workspace (one per email), so they are ordered in memory.
 */
export async function listWorkspaceUsers(
  store: Store,
  workspace: string,
  page: PageRequest,
  now: Date,
): Promise<PageResult<WorkspaceUser>> {
  const unaccepted = await store.invitations.listUnaccepted(workspace);
  const invitations = ordered(unaccepted, page);
  const inInvitations = page.after?.id.startsWith(PREFIX.invitation) ?? false;
  // Among the invitations the members are behind us; one row is enough for their count.
  const members = await store.principals.listUsers(
    workspace,
    inInvitations ? { sort: page.sort, limit: 1, q: page.q } : page,
  );
  // Like the members' count (store keysetPage), `total` is of the whole list, whatever `q` is.
  const total = members.total + unaccepted.length;
  const items = inInvitations ? [] : members.items.map((row) => toWorkspaceUser(row, row.role));
  if (!inInvitations && members.hasMore) return { items, hasMore: true, last: members.last, total };

  const after = inInvitations ? page.after : undefined;
  const rest = after ? invitations.filter((i) => compare(position(i, page), after, page) > 0) : invitations;
  const taken = rest.slice(0, page.limit - items.length);
  items.push(...taken.map((invitation) => invitationUser(invitation, now)));
  const lastInvitation = taken.at(-1);
  const last = lastInvitation ? position(lastInvitation, page) : inInvitations ? page.after : members.last;
  return { items, hasMore: rest.length > taken.length, ...(last ? { last } : {}), total };
}

function invitationUser(invitation: InvitationRow, now: Date): WorkspaceUser {
  return {
    sub: '',
    email: invitation.email,
    email_verified: false,
    given_name: '',
    family_name: '',
    role: invitation.role as Role,
    accepted: false,
    expired: Date.parse(invitation.expiresAt) <= now.getTime(),
    source: 'invitation',
  };
}

/** An invitation's sort key: its creation time, or its email standing in for a name. */
function position(invitation: InvitationRow, page: PageRequest) {
  return {
    key: page.sort.startsWith('name') ? invitation.email : invitation.createdAt,
    id: invitation.id,
  };
}

function compare(a: { key: string; id: string }, b: { key: string; id: string }, page: PageRequest) {
  const ascending = a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  return page.sort.endsWith(':desc') ? -ascending : ascending;
}

function ordered(invitations: InvitationRow[], page: PageRequest): InvitationRow[] {
  const q = page.q?.toLowerCase();
  return invitations
    .filter((invitation) => !q || invitation.email.includes(q))
    .sort((a, b) => compare(position(a, page), position(b, page), page));
}
