/**
 * The two DER shapes OCSP stapling needs (RFC 6960): the request for one
 * certificate, and the status of a response. No OCSP or ASN.1 library is
 * among the dependencies; these are a few fixed structures, built from the
 * certificates Node has already parsed.
 *
 *   OCSPRequest ::= SEQUENCE { tbsRequest SEQUENCE { requestList SEQUENCE OF
 *     SEQUENCE { reqCert CertID } } }
 *   CertID ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier (sha1),
 *     issuerNameHash OCTET STRING, issuerKeyHash OCTET STRING,
 *     serialNumber INTEGER }
 *   OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED, ... }
 */
import { createHash, type X509Certificate } from 'node:crypto';

const SEQUENCE = 0x30;
const OCTET_STRING = 0x04;
const NULL = 0x05;
const OID = 0x06;
const ENUMERATED = 0x0a;
/** 1.3.14.3.2.26, SHA-1: what responders are required to understand for CertID. */
const SHA1_OID = Buffer.from([0x2b, 0x0e, 0x03, 0x02, 0x1a]);

interface Tlv {
  tag: number;
  /** Where the content starts and ends. */
  start: number;
  end: number;
  /** Where the whole element (tag and length included) starts. */
  begin: number;
}

function readTlv(der: Buffer, offset: number): Tlv {
  const tag = der[offset];
  let length = der[offset + 1];
  if (tag === undefined || length === undefined) throw new Error('truncated DER');
  let start = offset + 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4) throw new Error('unsupported DER length');
    length = der.readUIntBE(start, bytes);
    start += bytes;
  }
  if (start + length > der.length) throw new Error('truncated DER');
  return { tag, start, end: start + length, begin: offset };
}

function children(der: Buffer, parent: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let offset = parent.start; offset < parent.end; offset = out[out.length - 1]!.end) out.push(readTlv(der, offset));
  return out;
}

function encode(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(length);
  const trimmed = bytes.subarray(bytes.findIndex((b) => b !== 0));
  return Buffer.concat([Buffer.from([tag, 0x80 | trimmed.length]), trimmed, content]);
}

const sha1 = (data: Buffer): Buffer => createHash('sha1').update(data).digest();

/** The leaf's serial number and issuer Name, as they are encoded in its TBSCertificate. */
function leafFields(leaf: X509Certificate): { serial: Buffer; issuerName: Buffer } {
  const der = leaf.raw;
  const certificate = readTlv(der, 0);
  const tbs = children(der, certificate)[0];
  if (tbs === undefined) throw new Error('not a certificate');
  const fields = children(der, tbs);
  // An explicit [0] version comes first in v3 certificates.
  const skip = fields[0]?.tag === 0xa0 ? 1 : 0;
  const serial = fields[skip];
  const issuer = fields[skip + 2];
  if (serial === undefined || issuer === undefined) throw new Error('not a certificate');
  return { serial: der.subarray(serial.begin, serial.end), issuerName: der.subarray(issuer.begin, issuer.end) };
}

/** The issuer's public key bits: the BIT STRING of its SubjectPublicKeyInfo, without the unused-bits byte. */
function issuerKeyBits(issuer: X509Certificate): Buffer {
  const spki = issuer.publicKey.export({ type: 'spki', format: 'der' });
  const bitString = children(spki, readTlv(spki, 0))[1];
  if (bitString === undefined) throw new Error('not a public key');
  return spki.subarray(bitString.start + 1, bitString.end);
}

export function ocspRequest(leaf: X509Certificate, issuer: X509Certificate): Buffer {
  const { serial, issuerName } = leafFields(leaf);
  const certId = encode(
    SEQUENCE,
    Buffer.concat([
      encode(SEQUENCE, Buffer.concat([encode(OID, SHA1_OID), encode(NULL, Buffer.alloc(0))])),
      encode(OCTET_STRING, sha1(issuerName)),
      encode(OCTET_STRING, sha1(issuerKeyBits(issuer))),
      serial,
    ]),
  );
  return encode(SEQUENCE, encode(SEQUENCE, encode(SEQUENCE, encode(SEQUENCE, certId))));
}

/** `responseStatus` of an OCSPResponse: 0 is successful (the only kind worth stapling). */
export function ocspResponseStatus(der: Buffer): number {
  const response = readTlv(der, 0);
  const status = children(der, response)[0];
  if (response.tag !== SEQUENCE || status?.tag !== ENUMERATED || status.end - status.start !== 1) throw new Error('not an OCSP response');
  return der[status.start] as number;
}

/** The responder URL of a certificate's Authority Information Access, if it names one. */
export function ocspResponderUrl(leaf: X509Certificate): string | undefined {
  const match = /OCSP - URI:(\S+)/.exec(leaf.infoAccess ?? '');
  return match?.[1];
}
