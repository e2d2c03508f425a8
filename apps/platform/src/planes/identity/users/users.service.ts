import type { Revoked } from '../../../framework/revocations.js';
import type { z } from 'zod';
import type {
  invitationAcceptedSchema,
  pendingInvitationSchema,
  Role,
  WorkspaceUser,
} from '@tarmac/contract';
import {
  ApiError,
  conflict,
  notFound,
  type PageRequest,
  type PageResult,
  type Principal,
  type WorkspaceAccess,
} from '@tarmac/server-kit';
import type { PrincipalRow, Store } from '@tarmac/store';
import type { ApiKeysService } from '../api-keys/api-keys.service.js';
import { PREFIX, hashSecret, randomId, randomSecret } from '../../../framework/credentials.js';
import { listWorkspaceUsers, toWorkspaceUser } from './users-list.js';

type PendingInvitation = z.infer<typeof pendingInvitationSchema>;
const INVITATION_TTL_MS = 7 * 86_400_000;

/**
 * Users of a workspace (reference §1.13). Self-hosted, with no mail server and no identity
 * provider: inviting returns a one-time invitation token, which the invitee redeems at
 * `POST /v0/invitations/accept` for their first API key.
 */
export class UsersService {
  constructor(
    private readonly store: Store,
    private readonly apiKeys: ApiKeysService,
    private readonly now: () => Date,
    /** Told after a membership is removed (issue 19 item 10: sessions in that workspace close). */
    private readonly revoked: Revoked = () => undefined,
  ) {}

  async list(workspace: WorkspaceAccess, page: PageRequest): Promise<PageResult<WorkspaceUser>> {
    return listWorkspaceUsers(this.store, workspace.name, page, this.now());
  }

  async invite(
    workspace: WorkspaceAccess,
    inviter: Principal,
    input: { email: string; role: Role },
  ): Promise<PendingInvitation> {
    const email = input.email.toLowerCase();
    const at = this.now();
    const base = {
      email,
      role: input.role,
      workspace: workspace.name,
      invitedBy: inviter.id,
      createdAt: at.toISOString(),
      expiresAt: new Date(at.getTime() + INVITATION_TTL_MS).toISOString(),
    };
    const existing = await this.store.principals.getUserByEmail(email);
    if (existing) {
      if (existing.accountId !== workspace.accountId) throw conflict(`${email} belongs to another account`);
      if (await this.store.memberships.get(workspace.name, existing.id)) {
        throw conflict(`${email} is already a member of workspace "${workspace.name}"`);
      }
      await this.store.memberships.upsert(workspace.name, existing.id, input.role);
      return { ...base, accepted: true };
    }
    const token = `${randomId(PREFIX.invitation)}.${randomSecret()}`;
    await this.store.transaction(async (tx) => {
      await tx.invitations.deleteForEmail(workspace.name, email);
      await tx.invitations.create({
        id: randomId(PREFIX.invitation),
        workspace: workspace.name,
        email,
        role: input.role,
        invitedBy: inviter.id,
        tokenHash: hashSecret(token),
        expiresAt: base.expiresAt,
        createdAt: base.createdAt,
        acceptedAt: null,
      });
    });
    return { ...base, accepted: false, invitationToken: token };
  }

  async accept(input: {
    token: string;
    name?: string | undefined;
  }): Promise<z.infer<typeof invitationAcceptedSchema>> {
    const invitation = await this.store.invitations.getByTokenHash(hashSecret(input.token));
    if (!invitation) throw notFound('Invitation');
    if (invitation.acceptedAt) throw conflict('Invitation already accepted');
    if (Date.parse(invitation.expiresAt) <= this.now().getTime()) {
      throw new ApiError('validation_error', 'body.token: the invitation has expired; ask for a new one', {
        details: [{ field: 'body.token', message: 'expired' }],
      });
    }
    const workspace = await this.store.workspaces.get(invitation.workspace);
    if (!workspace) throw notFound(`Workspace "${invitation.workspace}"`);
    const at = this.now().toISOString();
    const user = await this.store.transaction(async (tx) => {
      const existing = await tx.principals.getUserByEmail(invitation.email);
      // A user belongs to one account: the email may have joined another account since the invite.
      if (existing && existing.accountId !== workspace.accountId) {
        throw conflict(`${invitation.email} belongs to another account`);
      }
      const row =
        existing ??
        (await tx.principals.create({
          id: randomId(PREFIX.user),
          kind: 'user',
          accountId: workspace.accountId,
          email: invitation.email,
          name: input.name ?? invitation.email.split('@')[0] ?? invitation.email,
          description: null,
          clientSecretHash: null,
          createdAt: at,
          updatedAt: at,
        }));
      await tx.memberships.upsert(invitation.workspace, row.id, invitation.role as Role);
      await tx.invitations.markAccepted(invitation.id, at);
      return row;
    });
    const apiKey = await this.apiKeys.create({ id: user.id, kind: 'user' }, { name: 'invitation' });
    return {
      sub: user.id,
      email: invitation.email,
      workspace: invitation.workspace,
      role: invitation.role as Role,
      apiKey,
    };
  }

  async updateRole(workspace: WorkspaceAccess, subOrEmail: string, role: Role): Promise<WorkspaceUser> {
    const { user, currentRole } = await this.member(workspace, subOrEmail);
    if (currentRole === 'admin' && role !== 'admin') await this.keepOneAdmin(workspace);
    await this.store.memberships.upsert(workspace.name, user.id, role);
    return toWorkspaceUser(user, role);
  }

  async remove(workspace: WorkspaceAccess, subOrEmail: string): Promise<WorkspaceUser> {
    const found = await this.findUser(subOrEmail);
    const membership = found && (await this.store.memberships.get(workspace.name, found.id));
    if (found && membership) {
      if (membership.role === 'admin') await this.keepOneAdmin(workspace);
      await this.store.memberships.remove(workspace.name, found.id);
      this.revoked({ principalId: found.id, workspace: workspace.name });
      return toWorkspaceUser(found, membership.role);
    }
    const email = subOrEmail.toLowerCase();
    // Expired invitations are listed too (`expired: true`), so they can be removed as well.
    const pending = (await this.store.invitations.listUnaccepted(workspace.name)).find(
      (invitation) => invitation.email === email,
    );
    if (!pending) throw notFound(`User "${subOrEmail}" in workspace "${workspace.name}"`);
    await this.store.invitations.deleteForEmail(workspace.name, email);
    return {
      sub: '',
      email,
      email_verified: false,
      given_name: '',
      family_name: '',
      role: pending.role as Role,
      accepted: false,
      expired: Date.parse(pending.expiresAt) <= this.now().getTime(),
      source: 'invitation',
    };
  }

  private async findUser(subOrEmail: string): Promise<PrincipalRow | undefined> {
    const row = subOrEmail.includes('@')
      ? await this.store.principals.getUserByEmail(subOrEmail.toLowerCase())
      : await this.store.principals.get(subOrEmail);
    return row?.kind === 'user' ? row : undefined;
  }

  private async member(workspace: WorkspaceAccess, subOrEmail: string) {
    const user = await this.findUser(subOrEmail);
    const membership = user && (await this.store.memberships.get(workspace.name, user.id));
    if (!user || !membership) throw notFound(`User "${subOrEmail}" in workspace "${workspace.name}"`);
    return { user, currentRole: membership.role };
  }

  /** A workspace always keeps at least one admin, or nobody could manage it. */
  private async keepOneAdmin(workspace: WorkspaceAccess): Promise<void> {
    if ((await this.store.memberships.countAdmins(workspace.name)) <= 1) {
      throw conflict(`Workspace "${workspace.name}" must keep at least one admin`);
    }
  }
}
