#!/usr/bin/env bash
# make_test_certs.sh DIR — a throwaway CA and a server certificate for
# 127.0.0.1 / localhost (the TLS tests of the plugin channel), made with the
# openssl CLI at test time: nothing secret is kept in the repository.
#   DIR/ca.crt            the CA the plugin trusts (controller_ca)
#   DIR/server.crt, .key  railyardd's plugin_tls_cert / plugin_tls_key
#   DIR/other-ca.crt      a CA that signed nothing here (an untrusted server)
#   DIR/other.crt, .key   a server certificate signed by other-ca
# ECDSA P-256: quick to make and to handshake with.
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
curve=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > server.ext
for ca in ca other-ca; do
  openssl req -x509 "${curve[@]}" -keyout "$ca.key" -out "$ca.crt" -days 2 -subj "/CN=railyard test $ca" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
done
make_server() {  # NAME CA
  openssl req "${curve[@]}" -keyout "$1.key" -out "$1.csr" -subj "/CN=127.0.0.1" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -out "$1.crt" -days 2 \
    -extfile server.ext 2>/dev/null
}
make_server server ca
make_server other other-ca
chmod 600 ./*.key
