import { coreRoutes as r, type RouteBodyInput, type RouteQueryInput, type Role } from '@tarmac/contract';
import type { TarmacClient } from '../client.js';

/** Members of the client's workspace and their invitations (reference §1.13). */
export class UsersApi {
  constructor(private readonly client: TarmacClient) {}
  list(query: Partial<RouteQueryInput<typeof r.listUsers>> = {}) {
    return this.client.paginate(r.listUsers, { query });
  }
  invite(body: RouteBodyInput<typeof r.inviteUser>) {
    return this.client.request(r.inviteUser, { body });
  }
  updateRole(subOrEmail: string, role: Role) {
    return this.client.request(r.updateUser, { params: { subOrEmail }, body: { role } });
  }
  remove(subOrEmail: string) {
    return this.client.request(r.removeUser, { params: { subOrEmail } });
  }
  /** Redeems an invitation token (no auth needed) for an API key, shown once. */
  acceptInvitation(body: RouteBodyInput<typeof r.acceptInvitation>) {
    return this.client.request(r.acceptInvitation, { body });
  }
}
